package accounts

import "time"

// DefaultQueryTimeout bounds every query and transaction of the NEX service stores
// (matchmaking, Ranking, DataStore) unless their Timeout says otherwise.
const DefaultQueryTimeout = 5 * time.Second
