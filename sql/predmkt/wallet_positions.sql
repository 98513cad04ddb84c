-- PredmktWalletPositions returns one wallet's fills netted per outcome token as of now,
-- with the market and its resolution (NULL when none at or before now).
-- $1 wallet, $2 now (epoch ms). Shares and USD are integer micro-units.
WITH f AS (
    SELECT token_id, condition_id, outcome_index, side, ts,
           CAST(round(usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(size * 1e6) AS BIGINT) AS size
    FROM predmkt_trades
    WHERE wallet = $1 AND ts <= $2
), p AS (
    SELECT token_id, any_value(condition_id) AS condition_id, any_value(outcome_index) AS outcome_index,
           CAST(coalesce(sum(size) FILTER (WHERE side = 'BUY'), 0) AS BIGINT)  AS buy_sh,
           CAST(coalesce(sum(size) FILTER (WHERE side = 'SELL'), 0) AS BIGINT) AS sell_sh,
           CAST(coalesce(sum(usd) FILTER (WHERE side = 'BUY'), 0) AS BIGINT)   AS buy_usd,
           CAST(coalesce(sum(usd) FILTER (WHERE side = 'SELL'), 0) AS BIGINT)  AS sell_usd,
           count(*) AS n, min(ts) AS first_ts, max(ts) AS last_ts
    FROM f GROUP BY token_id
)
SELECT p.token_id, p.condition_id, p.outcome_index, coalesce(tk.outcome, ''),
       coalesce(m.question, ''), coalesce(m.category, ''),
       p.buy_sh, p.sell_sh, p.buy_usd, p.sell_usd, p.n, p.first_ts, p.last_ts,
       r.condition_id IS NOT NULL AS resolved,
       coalesce(r.invalid OR r.winning_index IS NULL, false) AS invalid,
       r.winning_index, epoch_ms(r.resolved_ts)
FROM p
LEFT JOIN predmkt_tokens tk ON tk.token_id = p.token_id
LEFT JOIN predmkt_markets m ON m.condition_id = p.condition_id
LEFT JOIN (SELECT * FROM predmkt_resolutions WHERE epoch_ms(resolved_ts) <= $2) r ON r.condition_id = p.condition_id;
