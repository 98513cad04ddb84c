-- onchainWalletIndex (the Go per-wallet index behind wallets/{address}, counterparties
-- and compare) reads the legs of onchain_legs_mem with rowid in [$1, $2) as four values
-- each, so the Go side stores no strings per leg and the driver converts few values a
-- row (about 0.1 us each); reading in rowid ranges keeps the driver's materialised
-- result small (the whole table at once held about 0.5 GB more at the build's peak).
-- The values: the leg's rowid, which is its place in the legs' (chain, wallet, time)
-- order since legs_build_chain.sql inserted them sorted (the Go side puts each row at
-- its rowid, so no ORDER BY is needed, and checks each wallet's range with
-- wallet_index_keys.sql); the time as epoch microseconds; the USD as DECIMAL(18, 6), an
-- exact int64 of micro-dollars, NULL for a leg beyond 10^12 USD (the Go side then
-- answers that wallet from the SQL, whose DECIMAL(38, 6) sums cannot overflow); and
-- counterparty id << 32 | token id << 2 | self << 1 | inbound (ids of onchain_ids_mem).
-- (Multiplying the DECIMAL(38, 6) by 10^6 into a BIGINT here costs about 4 s on the
-- medium lake; the narrowing TRY_CAST about 0.1 s.)
SELECT l.rowid, epoch_us(l.block_time) AS ts,
       TRY_CAST(l.usd AS DECIMAL(18, 6)) AS usd,
       (p.id << 32) | (t.id << 2) | (CASE WHEN l.self THEN 2 ELSE 0 END) | (CASE WHEN l.dir = 1 THEN 1 ELSE 0 END) AS packed
FROM onchain_legs_mem l
JOIN onchain_ids_mem p ON p.kind = 'a' AND p.v = l.cp
JOIN onchain_ids_mem t ON t.kind = 't' AND t.v = l.token
WHERE l.rowid >= $1 AND l.rowid < $2;
