# make install: the library alone (libqkv.a, libqkv.so, the headers <qkv/qkv.h> includes, qkv.pc)
# and the command (make uninstall, in the Makefile, takes them away)
.PHONY: install
install: all
	install -d $(DESTDIR)$(PREFIX)/lib/pkgconfig $(DESTDIR)$(PREFIX)/bin
	install -m 644 $(BUILD)/libqkv.a $(DESTDIR)$(PREFIX)/lib/libqkv.a
	install -m 755 $(BUILD)/libqkv.so $(DESTDIR)$(PREFIX)/lib/libqkv.so.$(VERSION)
	ln -sf libqkv.so.$(VERSION) $(DESTDIR)$(PREFIX)/lib/libqkv.so.0
	ln -sf libqkv.so.0 $(DESTDIR)$(PREFIX)/lib/libqkv.so
	install -m 755 $(BUILD)/qkv $(DESTDIR)$(PREFIX)/bin/qkv
	for h in $$(scripts/public-headers.sh lib); do \
	    d=$(DESTDIR)$(PREFIX)/include/qkv/$$(dirname $${h#src/}); install -d $$d; \
	    install -m 644 $$h $$d/; done
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' -e 's|@REQUIRES_PRIVATE@|$(PC_REQUIRES_PRIVATE)|' qkv.pc.in \
	    > $(DESTDIR)$(PREFIX)/lib/pkgconfig/qkv.pc
