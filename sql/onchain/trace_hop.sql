-- OnchainTrace (one hop): for each wallet of the frontier, its counterparties on the
-- chain in the window whose pair volume (USD both ways) clears min_usd, the top
-- `width` of them by volume (ties on address), with their rank (1 first). Sums are
-- DECIMAL so ties are exact and the ranking is the same on every run. out_usd flowed
-- from the frontier wallet to the counterparty, in_usd back; tx_count counts transfers
-- both ways. Reads the frontier's legs; self-transfers are not counterparties.
-- $1 chain, $2 since (epoch us, exclusive), $3 until (epoch us, inclusive),
-- $4 frontier (comma-separated lower-case addresses), $5 min_usd, $6 width.
SELECT wallet AS x, cp AS c,
       coalesce(sum(usd) FILTER (WHERE dir = -1), 0)::DOUBLE AS out_usd,
       coalesce(sum(usd) FILTER (WHERE dir = 1), 0)::DOUBLE AS in_usd,
       count(*) AS tx_count,
       row_number() OVER (PARTITION BY wallet ORDER BY sum(usd) DESC, cp) AS rank
FROM onchain_legs_mem
WHERE wallet IN (SELECT unnest(string_split($4, ','))) AND chain = $1 AND NOT self
  AND block_time > make_timestamp($2) AND block_time <= make_timestamp($3)
GROUP BY wallet, cp
HAVING sum(usd) >= $5
QUALIFY rank <= $6;
