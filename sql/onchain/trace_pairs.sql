-- OnchainTrace's hourly pair board: the (wallet, counterparty) pairs of the chain in the
-- window, from the wallet's side, each wallet's pairs ranked by pair volume (USD both
-- ways, exact DECIMAL sums) largest first, ties on the counterparty's address, and cut
-- to the head of each ranking, its first $4 pairs (OnchainTraceMaxWidth): a hop never
-- reads further (below), and the whole ranking was five times the rows (3.4 million
-- pairs of a large chain's 30 days against 0.74 million heads).
-- out_usd flowed from the wallet to the counterparty, in_usd back; tx_count counts
-- transfers both ways; vol is the pair volume the min_usd floor compares with. A hop
-- takes the first `width` pairs clearing the floor (they are a prefix of the ranking).
-- Self-transfers are not counterparties.
-- $1 chain, $2 since (epoch us, exclusive), $3 until (epoch us, inclusive), $4 the
-- head's length.
SELECT wallet AS x, cp AS c,
       coalesce(sum(usd) FILTER (WHERE dir = -1), 0)::DOUBLE AS out_usd,
       coalesce(sum(usd) FILTER (WHERE dir = 1), 0)::DOUBLE AS in_usd,
       count(*) AS tx_count,
       sum(usd)::DOUBLE AS vol
FROM onchain_legs
WHERE chain = $1 AND NOT self
  AND block_time > make_timestamp($2) AND block_time <= make_timestamp($3)
GROUP BY wallet, cp
QUALIFY row_number() OVER (PARTITION BY wallet ORDER BY sum(usd) DESC, cp) <= $4
ORDER BY wallet, sum(usd) DESC, cp;
