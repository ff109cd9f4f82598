//go:build unix && !linux

package mcpclient

// liveGroupMembers cannot tell zombies apart without /proc; kill(-pgid, 0)
// succeeded, so the group is reported alive and the caller escalates to
// SIGKILL after the grace period at worst.
func liveGroupMembers(pgid int) []int { return []int{pgid} }
