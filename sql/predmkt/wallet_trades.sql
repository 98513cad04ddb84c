-- PredmktWalletTrades pages one wallet's fills from its own side, newest first, after
-- the keyset (ts, seq, token_id) of the last row served.
-- $1 wallet, $2 condition_id ('' any), $3 token_id ('' any), $4 from ms, $5 to ms
-- (exclusive), $6 has a keyset, $7..$9 the keyset, $10 limit.
-- A wallet is never both sides of one trade, so (ts, seq, token_id) is unique per wallet.
SELECT t.trade_id, t.ts, t.seq, t.token_id, t.condition_id, t.outcome_index, coalesce(tk.outcome, ''),
       coalesce(m.question, ''), t.role, t.side, t.price, t.size, t.usd, t.tx_hash
FROM predmkt_trades t
LEFT JOIN predmkt_tokens tk ON tk.token_id = t.token_id
LEFT JOIN predmkt_markets m ON m.condition_id = t.condition_id
WHERE t.wallet = $1
  AND ($2 = '' OR t.condition_id = $2)
  AND ($3 = '' OR t.token_id = $3)
  AND t.ts >= $4 AND t.ts < $5
  AND (NOT $6 OR t.ts < $7 OR (t.ts = $7 AND (t.seq < $8 OR (t.seq = $8 AND t.token_id < $9))))
ORDER BY t.ts DESC, t.seq DESC, t.token_id DESC
LIMIT $10;
