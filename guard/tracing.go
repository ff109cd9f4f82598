package guard

import (
	"context"
	"time"

	"github.com/agentapp/agentapp/telemetry"
)

// confirmTraced asks c inside a guard.approval span, which records the
// answer and how long the user took (telemetry.StartApproval).
func confirmTraced(ctx context.Context, c Confirmer, req ConfirmRequest) Decision {
	if !telemetry.Enabled(ctx) {
		return c.Confirm(ctx, req)
	}
	start := time.Now()
	ctx, sp := telemetry.StartApproval(ctx, req.Tool, req.Server)
	d := c.Confirm(ctx, req)
	sp.EndApproval(d.Approved, d.Reason, time.Since(start))
	return d
}
