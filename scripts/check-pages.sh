#!/bin/sh
# The pages a learner sees, opened in headless Chromium: the report of a small recall sweep
# trained here (report.html: 2 variants x 1 seed, 200 steps) and the answer's two pictures
# (docs/results/study-fourth/recall-attention/attention.svg and attention.zh.svg). Each must
# load, every SVG in it must draw a box and every image load, and nothing may reach the console
# as an error; a screenshot of each goes to OUT (default build/pages/). A broken page exits 1,
# naming it and what failed. Debian's chromium (and fonts-noto-cjk, for the Chinese picture) is
# installed when missing, as the other scripts install what they need (root; else the apt-get
# line to run).
#
#   scripts/check-pages.sh [OUT [FILE...]]   FILE...: further pages (HTML or SVG) to check the same way
set -eu
cd "$(dirname "$0")/.."
root=$PWD
out=${1:-build/pages}
case $out in /*) ;; *) out="$root/$out" ;; esac
[ $# -gt 0 ] && shift
more=""
for f in "$@"; do case $f in /*) more="$more $f" ;; *) more="$more $root/$f" ;; esac; done
mkdir -p "$out"

scripts/install-deps.sh chromium fonts-noto-cjk >/dev/null
make -s all >/dev/null
qkv="$root/build/qkv"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/qkv-pages-XXXXXX")
trap 'rm -rf "$tmp"' EXIT INT TERM

# the sweep: recall at demo size, cut to 200 steps
cat > "$tmp/sweep.json" <<EOF
{"title": "Pages check: recall", "base": "$root/configs/recall.json",
 "set": ["train.steps=200", "train.eval_every=100", "train.eval_examples=100"],
 "variants": [{"name": "full", "set": []}, {"name": "shared", "set": ["model.attention.qkv=shared"]}],
 "seeds": [0], "max_steps": 200}
EOF
"$qkv" ablate "$tmp/sweep.json" --out "$tmp/sweep" --jobs 2 --quiet

# Chromium, headless, in a profile of its own, with nothing fetched from the network
chrome() {
    chromium --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
        --disable-background-networking --disable-component-update --disable-sync \
        --user-data-dir="$tmp/profile" --hide-scrollbars --virtual-time-budget=5000 "$@"
}

# what runs in each page: errors and console.error recorded from the start; at load, every SVG's
# box and every image checked, the verdict written into the page as <pre id="qkv-check">
cat > "$tmp/head.html" <<'EOF'
<script>
window.qkvErrors = [];
window.addEventListener('error', function (e) {
  window.qkvErrors.push('error: ' + (e.message || (e.target && (e.target.src || e.target.href)) || e.type));
}, true);
(function () { var f = console.error; console.error = function () {
  window.qkvErrors.push('console: ' + Array.prototype.join.call(arguments, ' ')); f.apply(console, arguments); }; })();
window.addEventListener('load', function () {
  var bad = [], svgs = document.querySelectorAll('svg'), imgs = document.querySelectorAll('img');
  svgs.forEach(function (s, i) { var r = s.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0)) bad.push('svg #' + i + ' draws no box'); });
  imgs.forEach(function (m) { if (!(m.complete && m.naturalWidth > 0)) bad.push('image ' + m.getAttribute('src') + ' did not load'); });
  bad = bad.concat(window.qkvErrors);
  var p = document.createElement('pre'); p.id = 'qkv-check';
  p.textContent = bad.length ? 'FAIL ' + bad.join('; ') : 'OK ' + svgs.length + ' svg ' + imgs.length + ' img';
  document.body.appendChild(p);
});
</script>
EOF

status=0
# check NAME FILE WIDTH HEIGHT: FILE (an HTML page, or an SVG shown as an image) loaded with the
# script above, its verdict read back; the screenshot taken of FILE itself
check() {
    name=$1 file=$2
    page="$tmp/$name.html"
    case $file in
    *.svg) { echo "<!DOCTYPE html><html><head><meta charset=\"utf-8\">"; cat "$tmp/head.html";
             echo "</head><body><img src=\"file://$file\"></body></html>"; } > "$page" ;;
    *) awk -v head="$tmp/head.html" '
           !done && match($0, /<head[^>]*>/) {
               print substr($0, 1, RSTART + RLENGTH - 1)
               while ((getline l < head) > 0) print l
               print substr($0, RSTART + RLENGTH); done = 1; next
           } { print }' "$file" > "$page" ;;
    esac
    verdict=$(chrome --dump-dom "file://$page" 2>"$tmp/$name.log" | sed -n 's/.*<pre id="qkv-check">\([^<]*\)<\/pre>.*/\1/p')
    chrome --window-size="$3,$4" --screenshot="$out/$name.png" "file://$file" >/dev/null 2>&1 || true
    case $verdict in
    OK*) echo "check-pages: $name: $verdict; screenshot $out/$name.png" ;;
    "") echo "check-pages: $name ($file): the page did not load (no verdict; $tmp/$name.log)" >&2
        sed -n '1,20p' "$tmp/$name.log" >&2
        status=1 ;;
    *) echo "check-pages: $name ($file): $verdict" >&2; status=1 ;;
    esac
}

figure="$root/docs/results/study-fourth/recall-attention"
check report "$tmp/sweep/report.html" 1200 4000
check attention "$figure/attention.svg" 1000 800
check attention.zh "$figure/attention.zh.svg" 1000 800
for f in $more; do b=$(basename "$f"); check "${b%.*}" "$f" 1000 800; done
exit $status
