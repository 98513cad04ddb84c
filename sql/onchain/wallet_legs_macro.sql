-- wallet_legs(w, c, h, r, segs, today): the legs of wallet w (lower-case 0x address) on
-- chain c ('' for every chain), read from the wallet-clustered layout: the history
-- segments of w's bucket for the dates up to h, its recent segments for the dates after
-- h up to r (wallet_seg_legs), and the per-date onchain_legs files for the dates after r,
-- usually today's only (wallet_today_legs). h and r are the split dates of the last
-- publication (onchain/wallet_legs/_sources.json); with both '0001-01-01' every leg
-- comes from onchain_legs. segs and today are the files themselves, listed by the
-- caller (Queries.walletArgs: w's bucket's segment files of the chains asked, and the
-- per-date legs files dated after r), rather than the tables' views: a view globs
-- every partition directory of its table at each of the query's reads (138 legs
-- directories on the medium lake, 273 on the large, for each of the up to ten reads of
-- a query), which cost four times the reads themselves. A list is never empty (an empty
-- file of the same columns stands in). The date bounds also keep a segment file
-- rewritten under a request to its own dates. Same columns as onchain_legs, plus chain.
CREATE OR REPLACE MACRO wallet_seg_legs(w, c, h, r, segs) AS TABLE
SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM read_parquet(segs, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'bucket': VARCHAR, 'segment': VARCHAR})
WHERE wallet = w AND (c = '' OR chain = c)
  AND ((segment = 'history' AND date <= CAST(h AS DATE))
       OR (segment = 'recent' AND date > CAST(h AS DATE) AND date <= CAST(r AS DATE)));

CREATE OR REPLACE MACRO wallet_today_legs(w, c, r, today) AS TABLE
SELECT chain, wallet, cp, token, block_time, dir, amount, usd, priced, self, tx_hash, log_index, block_number
FROM read_parquet(today, hive_partitioning = true, hive_types = {'chain': VARCHAR, 'date': DATE})
WHERE wallet = w AND (c = '' OR chain = c) AND date > CAST(r AS DATE);

CREATE OR REPLACE MACRO wallet_legs(w, c, h, r, segs, today) AS TABLE
SELECT * FROM wallet_seg_legs(w, c, h, r, segs)
UNION ALL
SELECT * FROM wallet_today_legs(w, c, r, today)
