-- OnchainWalletCounterparties ranks a wallet's counterparties on one chain over a
-- rolling window by USD volume both ways (ties on address); the caller adds their cascade labels.
-- Reads the wallet's legs; self-transfers are not counterparties.
-- $1 chain, $2 address, $3 since (epoch us, exclusive), $4 until (epoch us, inclusive),
-- $5 row count, $6 and $7 the wallet segments' split dates, $8 the wallet's segment
-- files, $9 the per-date legs files after $7 (Queries.walletArgs).
WITH c AS (
    SELECT cp AS address,
           sum(usd) FILTER (WHERE dir = -1) AS out_usd,
           sum(usd) FILTER (WHERE dir = 1) AS in_usd,
           count(*) AS tx_count, count(DISTINCT token) AS tokens,
           min(block_time) AS first_ts, max(block_time) AS last_ts
    FROM wallet_legs($2, $1, $6, $7, $8, $9)
    WHERE NOT self
      AND block_time > make_timestamp($3) AND block_time <= make_timestamp($4)
    GROUP BY cp
),
top AS (
    SELECT *, coalesce(out_usd, 0) + coalesce(in_usd, 0) AS volume_usd FROM c
    ORDER BY volume_usd DESC, address LIMIT $5
)
-- Labels are looked up in Go (the cascade's map): a join here probes every label row.
SELECT top.address, top.volume_usd::DOUBLE, coalesce(top.out_usd, 0)::DOUBLE, coalesce(top.in_usd, 0)::DOUBLE,
       top.tx_count, top.tokens, top.first_ts, top.last_ts
FROM top
ORDER BY top.volume_usd DESC, top.address;
