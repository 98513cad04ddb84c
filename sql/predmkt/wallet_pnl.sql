-- PredmktWalletPnL returns a wallet's realized PnL per validly resolved market (resolved
-- at or before now) with the resolution time, in integer micro-USD: sells minus buys
-- plus its net shares of the winning outcome at 1 USD each. Invalid resolutions settle
-- nothing and are left out. $1 wallet, $2 now (epoch ms), $3 category ('' every market).
WITH f AS (
    SELECT t.condition_id, t.outcome_index, t.side,
           CAST(round(t.usd * 1e6) AS BIGINT)  AS usd,
           CAST(round(t.size * 1e6) AS BIGINT) AS size
    FROM predmkt_trades t
    JOIN predmkt_markets m ON m.condition_id = t.condition_id
    WHERE t.wallet = $1 AND t.ts <= $2 AND ($3 = '' OR m.category = $3)
), pm AS (
    SELECT condition_id,
           sum(CASE WHEN side = 'SELL' THEN usd ELSE -usd END) AS cash,
           sum(CASE WHEN outcome_index = 0 THEN (CASE WHEN side = 'BUY' THEN size ELSE -size END) ELSE 0 END) AS net0,
           sum(CASE WHEN outcome_index = 1 THEN (CASE WHEN side = 'BUY' THEN size ELSE -size END) ELSE 0 END) AS net1
    FROM f GROUP BY condition_id
)
SELECT pm.condition_id, epoch_ms(r.resolved_ts),
       CAST(pm.cash + CASE WHEN r.winning_index = 0 THEN pm.net0 ELSE pm.net1 END AS BIGINT)
FROM pm
JOIN predmkt_resolutions r ON r.condition_id = pm.condition_id
WHERE NOT r.invalid AND r.winning_index IS NOT NULL AND epoch_ms(r.resolved_ts) <= $2
ORDER BY 2, 1;
