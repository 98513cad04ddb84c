-- PredmktMarketStats returns per-outcome trading figures of one market as of now; the
-- market-wide distinct trader counts repeat on every row.
-- $1 condition_id, $2 now (epoch ms), $3 window start (epoch ms; the window is [$3, $2]).
-- Volume, trades and prices count each tape trade once (the taker fill); holders net
-- every fill (taker and maker). USD and shares are summed as integer micro-units.
WITH f AS (
    SELECT token_id, wallet, role, side, price, ts, seq,
           CAST(round(usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(size * 1e6) AS BIGINT) AS size
    FROM predmkt_trades
    WHERE condition_id = $1 AND ts <= $2
), t AS (
    SELECT token_id,
           CAST(sum(usd) AS BIGINT)                                         AS vol,
           CAST(sum(size) AS BIGINT)                                        AS shares,
           count(*)                                                         AS n,
           CAST(coalesce(sum(usd) FILTER (WHERE side = 'BUY'), 0) AS BIGINT)  AS buy,
           CAST(coalesce(sum(usd) FILTER (WHERE side = 'SELL'), 0) AS BIGINT) AS sell,
           arg_min(price, (ts, seq)) AS open, max(price) AS high, min(price) AS low, arg_max(price, (ts, seq)) AS last,
           CAST(coalesce(sum(usd) FILTER (WHERE ts >= $3), 0) AS BIGINT)   AS volw,
           count(*) FILTER (WHERE ts >= $3)                                 AS nw,
           min(ts) AS first_ts, max(ts) AS last_ts
    FROM f WHERE role = 'taker'
    GROUP BY token_id
), pos AS (
    SELECT token_id, wallet, sum(CASE WHEN side = 'BUY' THEN size ELSE -size END) AS net
    FROM f GROUP BY token_id, wallet
), h AS (
    SELECT token_id, count(*) FILTER (WHERE net > 0) AS holders,
           CAST(coalesce(sum(net) FILTER (WHERE net > 0), 0) AS BIGINT) AS held
    FROM pos GROUP BY token_id
)
SELECT tk.token_id, tk.outcome_index, tk.outcome,
       coalesce(t.vol, 0), coalesce(t.shares, 0), coalesce(t.n, 0), coalesce(t.buy, 0), coalesce(t.sell, 0),
       t.open, t.high, t.low, t.last, coalesce(t.volw, 0), coalesce(t.nw, 0), t.first_ts, t.last_ts,
       coalesce(h.holders, 0), coalesce(h.held, 0),
       (SELECT count(DISTINCT wallet) FROM f)                  AS traders,
       (SELECT count(DISTINCT wallet) FROM f WHERE ts >= $3)   AS traders_w
FROM predmkt_tokens tk
LEFT JOIN t ON t.token_id = tk.token_id
LEFT JOIN h ON h.token_id = tk.token_id
WHERE tk.condition_id = $1
ORDER BY tk.outcome_index;
