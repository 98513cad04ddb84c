-- The predmkt_market_totals partition of date $2: the totals of the previous date that
-- has some ($1, '' for none) plus the predmkt_market_days partition of $2, per market
-- and outcome token (query/day_derived.go). Sums add, the first and last fills are the
-- earliest and the latest by (ts, seq), as over the raw tape.
SELECT condition_id, token_id,
       sum(vol)                                  AS vol,
       sum(n)                                    AS n,
       min(first_ts)                             AS first_ts,
       max(last_ts)                              AS last_ts,
       arg_max(last_seq, (last_ts, last_seq))    AS last_seq,
       arg_max(last_price, (last_ts, last_seq))  AS last_price
FROM (
    SELECT condition_id, token_id, vol, n, first_ts, last_ts, last_seq, last_price
    FROM predmkt_market_totals
    WHERE $1 <> '' AND strftime(date, '%Y-%m-%d') = $1
    UNION ALL
    SELECT condition_id, token_id, vol, n, first_ts, last_ts, last_seq, last_price
    FROM predmkt_market_days
    WHERE strftime(date, '%Y-%m-%d') = $2
)
GROUP BY condition_id, token_id
