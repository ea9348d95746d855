"""The stages run over one table: `audit` (one answer), `batch` (a dataset on Dask), `contract`
(source-id acceptance) and `vendor_audit` (a vendor response's own citations)."""
