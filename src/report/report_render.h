/* Internal: the report's renderers. Each turns the report's data into one file's text and
 * knows nothing of what the report says: the Markdown and HTML renderers take the document
 * that report_layout.c arranged, CSV and JSON take records of fields (report_fields.c's). Every one
 * returns a malloc'd string, NULL when out of memory. */
#ifndef QKV_REPORT_RENDER_H
#define QKV_REPORT_RENDER_H

#include "qkv_api.h"

#include "report/report_data.h"
#include "report/report_doc.h"

/* report_md.c: the document as Markdown (results.md, report.md) */
QKV_INTERNAL char *qkv__report_render_md(const qkv_report_doc *doc);
/* report_html.c: the document as one self-contained HTML page (report.html) */
QKV_INTERNAL char *qkv__report_render_html(const qkv_report_doc *doc);
/* report_csv.c: a row per record (results.csv: per variant; summary.csv: per ablation and variant) */
QKV_INTERNAL char *qkv__report_render_csv(const qkv_report_records *rec);
/* report_json.c: the configuration, the variants and their runs (results.json) */
QKV_INTERNAL char *qkv__report_render_json(const qkv_report *p);

#endif
