-- PredmktFamilies aggregates the crypto up/down families per (asset, tenor).
-- $1 asset or '' for every asset, $2 tenor or '' for every tenor, $3 the store clock
-- in epoch ms. Outcome index 0 is Up. The current market is the open market whose
-- trading window contains the clock (listed at or before it, ending after it), the
-- earliest-ending first. volume_24h counts taker fills (each tape trade once) with ts
-- in [$3 - 24h, $3], summed as integer micro-USD.
WITH fm AS (
    -- Markets listed by the clock (point in time: nothing later is known).
    SELECT * FROM predmkt_markets
    WHERE family_asset <> '' AND family_tenor <> '' AND epoch_ms(created_ts) <= $3
      AND ($1 = '' OR family_asset = $1) AND ($2 = '' OR family_tenor = $2)
), agg AS (
    SELECT m.family_asset, m.family_tenor,
           count(*)                                                                                   AS markets,
           count(*) FILTER (WHERE r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL) AS resolved,
           count(*) FILTER (WHERE NOT r.invalid AND r.winning_index = 0)                              AS up_wins,
           count(*) FILTER (WHERE NOT r.invalid AND r.winning_index = 1)                              AS down_wins
    FROM fm m
    LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $3) r ON r.condition_id = m.condition_id
    GROUP BY 1, 2
), cur AS (
    SELECT family_asset, family_tenor,
           arg_min(condition_id, (end_ts, condition_id)) AS condition_id
    FROM fm
    -- A market is closed at the clock only once its end has passed (closed AND end_ts
    -- <= $3): here end_ts > $3, so every such market is open then.
    WHERE epoch_ms(created_ts) <= $3 AND epoch_ms(end_ts) > $3
    GROUP BY 1, 2
), vol AS (
    SELECT m.family_asset, m.family_tenor, CAST(sum(CAST(round(t.usd * 1e6) AS BIGINT)) AS BIGINT) AS vol_24h
    FROM predmkt_trades t
    JOIN fm m ON m.condition_id = t.condition_id
    WHERE t.role = 'taker' AND t.ts BETWEEN $3 - 86400000 AND $3
    GROUP BY 1, 2
)
SELECT a.family_asset, a.family_tenor, a.markets, a.resolved, a.up_wins, a.down_wins,
       c.condition_id, cm.question, cm.end_ts, y.token_id,
       coalesce(v.vol_24h, 0)
FROM agg a
LEFT JOIN cur c ON c.family_asset = a.family_asset AND c.family_tenor = a.family_tenor
LEFT JOIN fm cm ON cm.condition_id = c.condition_id
LEFT JOIN predmkt_tokens y ON y.condition_id = c.condition_id AND y.outcome_index = 0
LEFT JOIN vol v ON v.family_asset = a.family_asset AND v.family_tenor = a.family_tenor
ORDER BY a.family_asset, a.family_tenor;
