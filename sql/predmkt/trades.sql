-- PredmktTrades pages the trade tape: each tape trade once (its taker fill, joined to
-- its maker fill on (token_id, seq)), filtered by market, token and/or wallet (taker or
-- maker), over the half-open window [$4, $5) of ts, newest first when $6.
-- $1 condition_id ('' any), $2 token_id ('' any), $3 wallet ('' any), $4 from ms,
-- $5 to ms (exclusive), $6 descending, $7 has a keyset, $8..$10 the keyset
-- (ts, seq, token_id) of the last row served, $11 limit.
SELECT t.trade_id, t.ts, t.seq, t.token_id, t.condition_id, t.outcome_index, coalesce(tk.outcome, ''),
       t.side, t.price, t.size, t.usd, t.wallet, m.wallet, t.tx_hash
FROM predmkt_trades t
JOIN predmkt_trades m
  ON m.token_id = t.token_id AND m.seq = t.seq AND m.ts = t.ts AND m.role = 'maker'
 AND ($1 = '' OR m.condition_id = $1) AND ($2 = '' OR m.token_id = $2) AND m.ts >= $4 AND m.ts < $5
LEFT JOIN predmkt_tokens tk ON tk.token_id = t.token_id
WHERE t.role = 'taker'
  AND ($1 = '' OR t.condition_id = $1)
  AND ($2 = '' OR t.token_id = $2)
  AND ($3 = '' OR t.wallet = $3 OR m.wallet = $3)
  AND t.ts >= $4 AND t.ts < $5
  AND (NOT $7
       OR ($6 AND (t.ts < $8 OR (t.ts = $8 AND (t.seq < $9 OR (t.seq = $9 AND t.token_id < $10)))))
       OR (NOT $6 AND (t.ts > $8 OR (t.ts = $8 AND (t.seq > $9 OR (t.seq = $9 AND t.token_id > $10))))))
ORDER BY CASE WHEN $6 THEN t.ts END DESC, CASE WHEN $6 THEN t.seq END DESC, CASE WHEN $6 THEN t.token_id END DESC,
         t.ts, t.seq, t.token_id
LIMIT $11;
