-- Every fill of one predmkt_trades partition summed per wallet and market, for the
-- predmkt_wallet_days partition of the same date (query/day_derived.go), which the
-- prediction-market board (board.sql) sums in place of the date's raw fills.
-- $1 the source trades file.
-- Money and shares are rounded to integer micro-units per fill and then added, exactly
-- as board.sql does over raw fills, so a sum of days equals the sum over their fills.
-- A fill without a ts is left out: the board never counts it (ts <= clock is not true).
SELECT wallet, condition_id,
       CAST(sum(usd) AS BIGINT)                                                   AS vol,
       count(*)                                                                   AS n,
       CAST(sum(CASE WHEN side = 'SELL' THEN usd ELSE -usd END) AS BIGINT)        AS cash,
       CAST(sum(CASE WHEN outcome_index = 0 THEN (CASE WHEN side = 'BUY' THEN size ELSE -size END) ELSE 0 END) AS BIGINT) AS net0,
       CAST(sum(CASE WHEN outcome_index = 1 THEN (CASE WHEN side = 'BUY' THEN size ELSE -size END) ELSE 0 END) AS BIGINT) AS net1,
       min(ts)                                                                    AS first_ts,
       max(ts)                                                                    AS last_ts
FROM (
    SELECT wallet, condition_id, outcome_index, side, ts,
           CAST(round(usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(size * 1e6) AS BIGINT) AS size
    FROM read_parquet($1, hive_partitioning = false)
    WHERE ts IS NOT NULL
)
GROUP BY wallet, condition_id
