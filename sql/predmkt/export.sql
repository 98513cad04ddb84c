-- PredmktOHLCVExport streams every candle bar of one outcome token, oldest first, with
-- no bar cap. $1 token_id, $2 bucket width in ms, $3 from, $4 to (both inclusive).
-- Each tape trade is stored twice in predmkt_trades (taker and maker); the taker row
-- counts it once. Bars exist only for buckets that traded.
SELECT (ts - ts % $2)              AS bucket,
       arg_min(price, (ts, seq))   AS open,
       max(price)                  AS high,
       min(price)                  AS low,
       arg_max(price, (ts, seq))   AS close,
       sum(size)                   AS volume,
       count(*)                    AS trades
FROM predmkt_trades
WHERE token_id = $1 AND role = 'taker' AND ts BETWEEN $3 AND $4
GROUP BY bucket
ORDER BY bucket;
