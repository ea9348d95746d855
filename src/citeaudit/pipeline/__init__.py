"""The stages run over one table: `audit` (one answer), `batch` (a dataset on Dask), `contract`
(source-id acceptance), `vendor_audit` (a vendor response's own citations) and `jsonl` (the JSON
Lines records). The pipeline imports no surface: the surfaces render what it returns."""
