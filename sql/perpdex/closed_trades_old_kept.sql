-- PublishPerpdexClosedTrades, incremental: the rows of a bucket's previous
-- perpdex_closed_trades file ($1) that stay: per (wallet, asset), the trades numbered
-- below the trade of the checkpoint the publication restarts from (ct_cp_in), which
-- were over before its date (the next trade had started), so no fill from then on can
-- change them. A pair without a checkpoint row had no fill before the date: none stay.
SELECT o.*
FROM read_parquet($1, hive_partitioning = false) o
LEFT JOIN ct_cp_in cp ON cp.wallet = o.wallet AND cp.asset = o.asset
WHERE o.trade_no < coalesce(cp.trade_no, 1)
