-- PredmktBuildBoard aggregates every (category, wallet) of the hourly board, unrounded.
-- $1 the board's clock in epoch ms (the start of its hour); windows are [$1 - width, $1],
-- and lifetime figures count only fills and resolutions at or before $1 (no lookahead
-- when the store clock is in the past of the lake).
-- A wallet's PnL on a validly resolved market is its cash flow (sells minus buys)
-- plus its net shares of the winning outcome at 1 USD each (losing shares pay 0).
-- An invalid resolution settles nothing: the market adds no PnL and no resolved count.
-- Money and shares are summed as integer micro-units so every figure is exact and
-- independent of summation order (the cent rounding then never depends on it).
WITH f AS (
    SELECT t.wallet, t.condition_id, m.category, t.outcome_index, t.side, t.ts,
           CAST(round(t.usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(t.size * 1e6) AS BIGINT) AS size
    FROM predmkt_trades t
    JOIN predmkt_markets m ON m.condition_id = t.condition_id
    WHERE t.ts <= $1
), wm AS (
    SELECT t.wallet, t.condition_id, any_value(t.category) AS category,
           CAST(sum(t.usd) AS BIGINT)                                          AS vol,
           count(*)                                                            AS n,
           sum(CASE WHEN t.side = 'SELL' THEN t.usd ELSE -t.usd END)           AS cash,
           sum(CASE WHEN t.outcome_index = 0 THEN (CASE WHEN t.side = 'BUY' THEN t.size ELSE -t.size END) ELSE 0 END) AS net0,
           sum(CASE WHEN t.outcome_index = 1 THEN (CASE WHEN t.side = 'BUY' THEN t.size ELSE -t.size END) ELSE 0 END) AS net1,
           coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 86400000 AND $1), 0)   AS vol_24h,
           coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 604800000 AND $1), 0)  AS vol_7d,
           coalesce(sum(t.usd) FILTER (WHERE t.ts BETWEEN $1 - 2592000000 AND $1), 0) AS vol_30d,
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 86400000 AND $1)                  AS n_24h,
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 604800000 AND $1)                 AS n_7d,
           count(*) FILTER (WHERE t.ts BETWEEN $1 - 2592000000 AND $1)                AS n_30d,
           min(t.ts) AS first_ts, max(t.ts) AS last_ts
    FROM f t
    GROUP BY t.wallet, t.condition_id
), pm AS (
    SELECT wm.*,
           (r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL) AS settled,
           epoch_ms(r.resolved_ts) AS res_ms,
           CASE WHEN r.condition_id IS NOT NULL AND NOT r.invalid AND r.winning_index IS NOT NULL
                THEN cash + CASE WHEN r.winning_index = 0 THEN net0 ELSE net1 END END AS pnl
    FROM wm LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $1) r ON r.condition_id = wm.condition_id
), cats AS (
    SELECT 'all' AS cat, * FROM pm
    UNION ALL
    SELECT category AS cat, * FROM pm
)
SELECT c.cat, c.wallet,
       coalesce(any_value(p.pseudonym), '')                                                         AS pseudonym,
       coalesce(any_value(p.display_name), '')                                                      AS display_name,
       CAST(coalesce(sum(c.pnl), 0) AS BIGINT)                                                      AS pnl,
       CAST(coalesce(sum(c.pnl) FILTER (WHERE c.res_ms BETWEEN $1 - 86400000 AND $1), 0) AS BIGINT)   AS pnl_24h,
       CAST(coalesce(sum(c.pnl) FILTER (WHERE c.res_ms BETWEEN $1 - 604800000 AND $1), 0) AS BIGINT)  AS pnl_7d,
       CAST(coalesce(sum(c.pnl) FILTER (WHERE c.res_ms BETWEEN $1 - 2592000000 AND $1), 0) AS BIGINT) AS pnl_30d,
       count(*) FILTER (WHERE c.settled)                                                            AS resolved,
       CAST(coalesce(sum(c.vol) FILTER (WHERE c.settled), 0) AS BIGINT)                             AS res_vol,
       -- "made money": the market's PnL is at least half a cent (5000 micro-USD).
       CAST(coalesce(sum(c.vol) FILTER (WHERE c.settled AND c.pnl >= 5000), 0) AS BIGINT)           AS win_vol,
       CAST(sum(c.vol) AS BIGINT), CAST(sum(c.vol_24h) AS BIGINT), CAST(sum(c.vol_7d) AS BIGINT), CAST(sum(c.vol_30d) AS BIGINT),
       sum(c.n), sum(c.n_24h), sum(c.n_7d), sum(c.n_30d),
       count(*)                                                                                     AS markets,
       min(c.first_ts), max(c.last_ts)
FROM cats c
LEFT JOIN predmkt_profiles p ON p.wallet = c.wallet
GROUP BY c.cat, c.wallet;
