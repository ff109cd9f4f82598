package mcpclient

import "github.com/agentapp/agentapp/mcpclient/internal/listing"

// listLimits bound what one paginated listing may bring into memory
// (listing.Limits); listLimitError is a listing stopped at one of them.
type (
	listLimits     = listing.Limits
	listLimitError = listing.LimitError
)

// withListLimits sets the bounds of every paginated listing (see
// listLimits; the zero value is the defaults).
func withListLimits(l listLimits) ConnectOption {
	return func(o *connectOptions) { o.lists = l }
}
