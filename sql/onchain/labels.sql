-- OnchainLabels resolves the label cascade of a list of addresses from the in-memory
-- cascade (onchain_labels_mem: per address, the row of the source with the lowest
-- priority number).
-- $1 comma-separated lower-case addresses.
SELECT address, entity, wallet_type, confidence, risk_flag, source
FROM onchain_labels_mem
WHERE address IN (SELECT unnest(string_split($1, ',')));
