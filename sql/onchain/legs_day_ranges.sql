-- publishWalletEdges: the first and last block_time date of each per-date legs file
-- listed, so that the edge days are read only from the files that can hold them (a leg
-- is filed under its transfer's partition date, which the lake does not promise to be
-- its block date). It reads the block_time column of each file listed; the publication
-- lists only the files it has no range for (new or changed since). $1 the files.
SELECT filename, CAST(min(block_time) AS DATE) AS lo, CAST(max(block_time) AS DATE) AS hi
FROM read_parquet($1, filename = true)
GROUP BY filename
