package handlers

// onchainRoutes are the on-chain routes.
func onchainRoutes() []*Route { return nil }
