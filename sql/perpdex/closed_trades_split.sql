-- PublishPerpdexClosedTrades, when it rewrites both segments of a bucket: the bucket's
-- trades (ct_merged, closed_trades_merge.sql) of one segment: $1 true for history (per
-- (wallet, asset), the trades numbered below its trade in the checkpoint of the newest
-- date, ct_cp_out: over before that date), false for recent (the others; a pair without
-- a checkpoint row had no fill before the date).
SELECT m.*
FROM ct_merged m
LEFT JOIN ct_cp_out cp ON cp.wallet = m.wallet AND cp.asset = m.asset
WHERE (m.trade_no < coalesce(cp.trade_no, 1)) = $1
