package handlers

// accessRoutes are the routes about the caller's own access (usage).
func accessRoutes() []*Route { return nil }
