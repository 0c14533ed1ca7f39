/* A CSV file of records (results.csv, summary.csv): a header of the fields' CSV names and one
 * row per record (RFC 4180 quoting; numbers in %.6g, the precision anyone reads from a table). */
#include "report/report_doc.h"

#include <string.h>

#include "io/strbuf.h"

/* one value; a missing one is the field's csv_missing text (empty by default) */
static void csv_value(qkv_strbuf *b, const qkv_report_field *f, const qkv_report_value *v) {
    switch (v->kind) {
    case QKV_REPORT_MISSING: qkv__strbuf_puts(b, f->csv_missing); break;
    case QKV_REPORT_NUM: qkv__strbuf_printf(b, "%.6g", v->num); break;
    case QKV_REPORT_INT: qkv__strbuf_printf(b, "%lld", v->i); break;
    case QKV_REPORT_STR: qkv__strbuf_csv_field(b, v->str ? v->str : ""); break;
    case QKV_REPORT_BOOL: qkv__strbuf_puts(b, v->b ? "true" : "false"); break;
    }
}

/* record r's line (r -1: the header of the fields' CSV names), the fields with a CSV name in list
 * order */
static void csv_line(qkv_strbuf *b, const qkv_report_records *rec, int r) {
    bool first = true;
    for (int f = 0; f < rec->n_fields; f++) {
        if (!rec->fields[f].csv) continue;
        if (!first) qkv__strbuf_puts(b, ",");
        if (r < 0) qkv__strbuf_csv_field(b, rec->fields[f].csv);
        else csv_value(b, &rec->fields[f], qkv_report_value_at(rec, r, f));
        first = false;
    }
    qkv__strbuf_puts(b, "\n");
}

char *qkv__report_render_csv(const qkv_report_records *rec) {
    qkv_strbuf b;
    qkv__strbuf_init(&b);
    for (int r = -1; r < rec->rows; r++) csv_line(&b, rec, r);
    return qkv__strbuf_take(&b);
}
