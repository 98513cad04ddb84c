-- PredmktSettlements pages resolutions (resolved_ts <= now), newest first, after the
-- keyset (resolved ms, condition_id), with the winning outcome and settled figures.
-- $1 now (epoch ms), $2 category ('' any), $3 status ('' any, resolved, invalid),
-- $4 from ms, $5 to ms (exclusive; on resolved_ts), $6 has a keyset, $7 after resolved
-- ms, $8 after condition_id, $9 limit.
-- volume and trades count each tape trade once (taker fills); payout is the positive
-- net shares of the winning outcome (1 USD each), summed as integer micro-units; an
-- invalid resolution pays nothing.
WITH r AS (
    SELECT r.condition_id, epoch_ms(r.resolved_ts) AS res_ms,
           (r.invalid OR r.winning_index IS NULL) AS invalid,
           CASE WHEN NOT r.invalid THEN r.winning_index END AS winning_index,
           m.question, m.slug, m.category
    FROM predmkt_resolutions r
    JOIN predmkt_markets m ON m.condition_id = r.condition_id
    WHERE epoch_ms(r.resolved_ts) <= $1
      AND ($2 = '' OR m.category = $2)
      AND ($3 = '' OR ($3 = 'invalid') = (r.invalid OR r.winning_index IS NULL))
      AND epoch_ms(r.resolved_ts) >= $4 AND epoch_ms(r.resolved_ts) < $5
      AND (NOT $6 OR epoch_ms(r.resolved_ts) < $7 OR (epoch_ms(r.resolved_ts) = $7 AND r.condition_id > $8))
    ORDER BY res_ms DESC, r.condition_id
    LIMIT $9
), f AS (
    SELECT condition_id, outcome_index, wallet, role,
           CAST(round(usd * 1e6) AS BIGINT) AS usd,
           CAST(CASE WHEN side = 'BUY' THEN round(size * 1e6) ELSE -round(size * 1e6) END AS BIGINT) AS dnet
    FROM predmkt_trades
    WHERE ts <= $1 AND condition_id IN (SELECT condition_id FROM r)
), v AS (
    SELECT condition_id,
           CAST(coalesce(sum(usd) FILTER (WHERE role = 'taker'), 0) AS BIGINT) AS vol,
           count(*) FILTER (WHERE role = 'taker') AS n,
           count(DISTINCT wallet) AS traders
    FROM f GROUP BY condition_id
), pos AS (
    SELECT condition_id, outcome_index, wallet, sum(dnet) AS net FROM f GROUP BY ALL
), pay AS (
    SELECT pos.condition_id,
           CAST(coalesce(sum(net), 0) AS BIGINT) AS payout, count(*) AS winners
    FROM pos JOIN r ON r.condition_id = pos.condition_id
    WHERE NOT r.invalid AND pos.outcome_index = r.winning_index AND pos.net > 0
    GROUP BY pos.condition_id
)
SELECT r.condition_id, r.question, r.slug, r.category, r.res_ms, r.invalid, r.winning_index,
       tk.outcome, tk.token_id,
       coalesce(v.vol, 0), coalesce(v.n, 0), coalesce(v.traders, 0), coalesce(pay.payout, 0), coalesce(pay.winners, 0)
FROM r
LEFT JOIN predmkt_tokens tk ON tk.condition_id = r.condition_id AND tk.outcome_index = r.winning_index
LEFT JOIN v ON v.condition_id = r.condition_id
LEFT JOIN pay ON pay.condition_id = r.condition_id
ORDER BY r.res_ms DESC, r.condition_id;
