-- PublishOnchainLegs: one file of onchain_holders_base, the bands of one chain (its
-- onchain_wallet_bands files of one version, every bucket) summed per (token, wallet)
-- over every band, ranked per token in the holders board's order: net inflow rounded to
-- the cent as token_holders.sql rounds it (a sum of none counts as 0 there too), then
-- the wallet. The zero address is no holder.
-- $1 the chain's bands files of the version.
SELECT token, wallet, inflow, outflow, amount_in, amount_out, tx_count, first_time, last_time,
       row_number() OVER (PARTITION BY token
                          ORDER BY round(coalesce(inflow, 0), 2) - round(coalesce(outflow, 0), 2) DESC, wallet) AS rank
FROM (
    SELECT token, wallet,
           sum(inflow) AS inflow, sum(outflow) AS outflow, sum(amount_in) AS amount_in, sum(amount_out) AS amount_out,
           sum(tx_count) AS tx_count, min(first_time) AS first_time, max(last_time) AS last_time
    FROM read_parquet($1, hive_partitioning = false)
    WHERE wallet <> '0x0000000000000000000000000000000000000000'
    GROUP BY token, wallet
)
