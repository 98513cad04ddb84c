-- One trades file ($1) as query/predmkt_smart_days.go keeps it for smart_money: every
-- fill with a ts, sorted by market, wallet and ts, with usd and size in integer
-- micro-units rounded exactly as smart_money_flows.sql and smart_money_buys.sql round
-- them (a fill without ts is outside every window, as there).
SELECT condition_id, wallet, outcome_index, side, ts,
       CAST(round(usd * 1e6) AS BIGINT), CAST(round(size * 1e6) AS BIGINT), token_id
FROM read_parquet($1, hive_partitioning = false)
WHERE ts IS NOT NULL
ORDER BY condition_id, wallet, ts;
