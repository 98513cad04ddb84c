-- PredmktMarkets lists markets with their status and trading figures as of the store
-- clock, in sort order after the keyset (sk, condition_id) > ($9, $10).
-- $1 now (epoch ms), $2 category ('' any), $3 status ('' any, open, resolved, invalid),
-- $4 family asset ('' any), $5 family tenor ('' any), $6 search text in lower case
-- ('' none), $7 sort (volume, volume_24h, trades, created, end), $8 condition_id
-- ('' any), $9 after sort key, $10 after condition_id, $11 limit; then the files each
-- source is read from, separated by chr(31) (never empty: a file of no rows stands for none,
-- query/file_lists.go): $12 predmkt_market_days partitions, $13 predmkt_trades
-- partitions read whole, $14 the predmkt_market_totals partition summing every date up
-- to it, $15 predmkt_market_hours partitions, $16 and $17 the hours (epoch ms of their
-- start, -1 none) of those dates read from their raw fills instead, $18 the trades
-- partitions of those dates (whose fills of hours $16 and $17 are read) and $19 the
-- predmkt_market_fills partitions of those dates (the same fills in time order; the
-- planner puts each of those dates in one of $18 and $19).
-- Trading figures count each tape trade once (the taker fill) with ts <= now; USD is
-- summed as integer micro-USD. A resolution counts once resolved_ts <= now; it is
-- resolved when it names a winning outcome, invalid otherwise. A market is listed once
-- created_ts <= now and closed once it is closed and its end_ts <= now (point in time).
WITH t AS (
    -- Every day up to $14 from its totals (all before the window), the later whole days
    -- from the per-day table, the days the clock or the 24-hour window cut from the
    -- per-hour table (each hour wholly before the clock and wholly inside or outside the
    -- window, but for the hours $16 and $17 the clock or the window's start falls inside,
    -- read raw), any day not yet published from the raw tape: the planner
    -- (marketDaysPlan in query/predmkt_markets.go) puts each date in exactly one of $14
    -- and before, $12 (per-day table, each wholly before the clock and wholly inside or
    -- outside the window), $15 (per-hour table) and $13 (raw).
    SELECT condition_id, vol, CAST(NULL AS BIGINT) AS vol24, n, last_ts
    FROM read_parquet(string_split($14, chr(31)), hive_partitioning = false)
    WHERE ($8 = '' OR condition_id = $8)
    UNION ALL
    SELECT condition_id, vol, CASE WHEN first_ts >= $1 - 86400000 THEN vol END, n, last_ts
    FROM read_parquet(string_split($12, chr(31)), hive_partitioning = false)
    WHERE ($8 = '' OR condition_id = $8)
    UNION ALL
    SELECT condition_id, vol, CASE WHEN hour_ts >= $1 - 86400000 THEN vol END, n, last_ts
    FROM read_parquet(string_split($15, chr(31)), hive_partitioning = false)
    WHERE hour_ts <= $1
      AND hour_ts <> $16 AND hour_ts <> $17 AND ($8 = '' OR condition_id = $8)
    UNION ALL
    SELECT condition_id, CAST(round(usd * 1e6) AS BIGINT), CASE WHEN ts >= $1 - 86400000 THEN CAST(round(usd * 1e6) AS BIGINT) END, 1, ts
    FROM read_parquet(string_split($13, chr(31)), hive_partitioning = false)
    WHERE role = 'taker' AND ts <= $1 AND ($8 = '' OR condition_id = $8)
    UNION ALL
    SELECT condition_id, CAST(round(usd * 1e6) AS BIGINT), CASE WHEN ts >= $1 - 86400000 THEN CAST(round(usd * 1e6) AS BIGINT) END, 1, ts
    FROM read_parquet(string_split($18, chr(31)), hive_partitioning = false)
    WHERE ts // 3600000 * 3600000 IN ($16, $17) AND role = 'taker' AND ts <= $1 AND ($8 = '' OR condition_id = $8)
    UNION ALL
    -- The same hours from the fills in time order, one part each: a plain range of ts
    -- is what lets the reader skip the row groups whose ts statistics lie outside it
    -- (the two ranges OR-ed are filtered row by row).
    SELECT condition_id, vol, CASE WHEN ts >= $1 - 86400000 THEN vol END, 1, ts
    FROM read_parquet(string_split($19, chr(31)), hive_partitioning = false)
    WHERE $16 >= 0 AND ts >= $16 AND ts < $16 + 3600000 AND ts <= $1 AND ($8 = '' OR condition_id = $8)
    UNION ALL
    SELECT condition_id, vol, CASE WHEN ts >= $1 - 86400000 THEN vol END, 1, ts
    FROM read_parquet(string_split($19, chr(31)), hive_partitioning = false)
    WHERE $17 >= 0 AND ts >= $17 AND ts < $17 + 3600000 AND ts <= $1 AND ($8 = '' OR condition_id = $8)
), v AS (
    SELECT condition_id,
           CAST(sum(vol) AS BIGINT)                 AS vol,
           CAST(coalesce(sum(vol24), 0) AS BIGINT)  AS vol24,
           CAST(sum(n) AS BIGINT)                   AS n,
           max(last_ts)                             AS last_ts
    FROM t
    GROUP BY condition_id
), m AS (
    SELECT mk.condition_id, mk.question, mk.slug, mk.category,
           coalesce(mk.family_asset, '') AS family_asset, coalesce(mk.family_tenor, '') AS family_tenor,
           epoch_ms(mk.created_ts) AS created_ms, epoch_ms(mk.end_ts) AS end_ms, mk.closed AND epoch_ms(mk.end_ts) <= $1 AS closed,
           CASE WHEN r.condition_id IS NULL THEN 'open'
                WHEN NOT r.invalid AND r.winning_index IS NOT NULL THEN 'resolved'
                ELSE 'invalid' END AS status,
           epoch_ms(r.resolved_ts) AS resolved_ms,
           CASE WHEN NOT r.invalid THEN r.winning_index END AS winning_index,
           coalesce(v.vol, 0) AS vol, coalesce(v.vol24, 0) AS vol24, coalesce(v.n, 0) AS n, v.last_ts
    FROM predmkt_markets mk
    LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $1) r ON r.condition_id = mk.condition_id
    LEFT JOIN v ON v.condition_id = mk.condition_id
    WHERE ($8 = '' OR mk.condition_id = $8) AND epoch_ms(mk.created_ts) <= $1
), k AS (
    SELECT *,
           CASE $7 WHEN 'volume' THEN -vol WHEN 'volume_24h' THEN -vol24 WHEN 'trades' THEN -n
                   WHEN 'created' THEN -created_ms ELSE end_ms END AS sk
    FROM m
    WHERE ($2 = '' OR category = $2)
      AND ($3 = '' OR status = $3)
      AND ($4 = '' OR family_asset = $4)
      AND ($5 = '' OR family_tenor = $5)
      AND ($6 = '' OR contains(lower(question), $6) OR contains(lower(slug), $6))
)
SELECT condition_id, question, slug, category, family_asset, family_tenor, created_ms, end_ms, closed,
       status, resolved_ms, winning_index, vol, vol24, n, last_ts, sk
FROM k
WHERE sk > $9 OR (sk = $9 AND condition_id > $10)
ORDER BY sk, condition_id
LIMIT $11;
