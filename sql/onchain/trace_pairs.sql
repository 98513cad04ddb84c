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
-- Each transfer is read once (onchain_transfers, with USD as the legs have it: exact
-- DECIMAL, 0 when unpriced) and summed per unordered pair {a, b} (a < b), so a pair's
-- two sides are one group; each side's head is then cut from its own orientation
-- (a wallet's counterparties above it in one, below it in the other: disjoint, under
-- the same order), and the wallet's head from those two heads. The same rows as
-- grouping both legs of every transfer by (wallet, counterparty) and ranking all of
-- them, for about two thirds of the CPU at large (DuckDB grouped 7.2 million legs into
-- 3.1 million pairs there).
-- The date conditions let DuckDB skip the partitions outside the window before opening
-- them (a transfers partition's date is its rows' block time's UTC date, as the
-- loaders write it and the legs' split dates rely on).
-- $1 chain, $2 since (epoch us, exclusive), $3 until (epoch us, inclusive), $4 the
-- head's length.
WITH p AS (
    SELECT least(from_address, to_address) AS a, greatest(from_address, to_address) AS b,
           coalesce(sum(CAST(coalesce(usd, 0) AS DECIMAL(38, 6))) FILTER (WHERE from_address < to_address), 0) AS ab,
           coalesce(sum(CAST(coalesce(usd, 0) AS DECIMAL(38, 6))) FILTER (WHERE from_address > to_address), 0) AS ba,
           count(*) AS n
    FROM onchain_transfers
    WHERE chain = $1 AND from_address <> to_address
      AND block_time > make_timestamp($2) AND block_time <= make_timestamp($3)
      AND date >= CAST(make_timestamp($2) AS DATE) AND date <= CAST(make_timestamp($3) AS DATE)
    GROUP BY a, b
), s AS (
    SELECT a AS x, b AS c, ab AS o, ba AS i, n, ab + ba AS v FROM p
    QUALIFY row_number() OVER (PARTITION BY a ORDER BY ab + ba DESC, b) <= $4
    UNION ALL
    SELECT b, a, ba, ab, n, ab + ba FROM p
    QUALIFY row_number() OVER (PARTITION BY b ORDER BY ab + ba DESC, a) <= $4
)
SELECT x, c, o::DOUBLE AS out_usd, i::DOUBLE AS in_usd, n AS tx_count, v::DOUBLE AS vol
FROM s
QUALIFY row_number() OVER (PARTITION BY x ORDER BY v DESC, c) <= $4
ORDER BY x, v DESC, c;
