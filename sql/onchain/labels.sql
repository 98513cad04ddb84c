-- OnchainLabels: the whole in-memory cascade (onchain_labels_mem: per address, the row
-- of the source with the lowest priority number), read into a Go map once per legs
-- build.
SELECT address, entity, wallet_type, confidence, risk_flag, source
FROM onchain_labels_mem;
