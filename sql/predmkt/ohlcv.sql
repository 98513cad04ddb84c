-- PredmktOHLCV returns candle bars of one outcome token, oldest first.
-- $1 token_id, $2 bucket width in ms, $3 from (inclusive), $4 to (inclusive), $5 limit,
-- $6 $7 the first and last date partition that can hold trades of the range (from the
-- tape index's per-file ts spans), so only those files are opened; inside them the
-- files' token order lets DuckDB skip every row group of other tokens.
-- Each tape trade is stored twice in predmkt_trades (taker and maker); the taker row
-- counts it once. Bars exist only for buckets that traded.
SELECT
    (ts - ts % $2)                        AS bucket,
    arg_min(price, (ts, seq))    AS open,
    max(price)                            AS high,
    min(price)                            AS low,
    arg_max(price, (ts, seq))    AS close,
    sum(size)                             AS volume,
    count(*)                              AS trades
FROM predmkt_trades
WHERE "date" BETWEEN CAST($6 AS DATE) AND CAST($7 AS DATE)
  AND token_id = $1
  AND role = 'taker'
  AND ts BETWEEN $3 AND $4
GROUP BY bucket
ORDER BY bucket
LIMIT $5;
