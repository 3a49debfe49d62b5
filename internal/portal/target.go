package portal

import (
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// CheckTarget validates a target URL: absolute http or https with a host.
// Unless local (Settings.LocalTargets), its host may not name the worker's
// own machine, link or cloud: localhost, a loopback, unspecified,
// link-local (where most clouds serve their metadata) or multicast address,
// another cloud's metadata address (cloudMetadata) or name (metadataName).
// A name that resolves to one, or to an address of the worker's own
// interfaces, is refused when a worker connects (DialGuard).
func CheckTarget(target string, local bool) (*url.URL, error) {
	if strings.TrimSpace(target) == "" {
		return nil, Errorf(CodeInvalid, "no target registered")
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, Errorf(CodeInvalid, "target %q is not an http:// or https:// URL with a host", target)
	}
	if local {
		return u, nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(host); err == nil && localAddress(ip) || host == "localhost" || strings.HasSuffix(host, ".localhost") ||
		metadataName(host) {
		return nil, Errorf(CodeInvalid, "target %q is on the worker's own machine, network link or cloud: this contest takes no such targets", target)
	}
	return u, nil
}

// TargetHost is the host u names, as no two teams' targets may share it
// (Settings.LocalTargets aside): lowercase without a trailing dot, an IP
// address in its one canonical spelling.
func TargetHost(u *url.URL) string {
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if ip, err := netip.ParseAddr(host); err == nil {
		return ip.Unmap().WithZone("").String()
	}
	return host
}

// DialGuard refuses a worker's connection to an address CheckTarget refuses
// or to one of the worker's own (its interfaces' addresses: a target must
// not be the worker's machine, nor the portal when it runs there), once a
// name has been resolved: see engine.WithDialControl.
type DialGuard struct {
	own map[netip.Addr]bool
}

// NewDialGuard is a guard for a worker whose own addresses are own.
func NewDialGuard(own []netip.Addr) *DialGuard {
	g := &DialGuard{own: make(map[netip.Addr]bool, len(own))}
	for _, ip := range own {
		g.own[ip.Unmap().WithZone("")] = true
	}
	return g
}

// Control is the guard as an engine.WithDialControl function.
func (g *DialGuard) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return Errorf(CodeInvalid, "connecting to %q: not an address", address)
	}
	ip := ap.Addr().Unmap().WithZone("")
	if localAddress(ip) || g.own[ip] {
		return Errorf(CodeDenied, "%s is on the worker's own machine, network link or cloud: this contest takes no such targets", ip)
	}
	return nil
}

// localAddress reports whether ip is one CheckTarget refuses.
func localAddress(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	return ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsMulticast() || cloudMetadata(ip)
}

// cloudMetadata reports whether ip is where a cloud serves its instances'
// metadata (and credentials) outside the link-local ranges: AWS over IPv6,
// Alibaba Cloud, and Azure's host endpoint (WireServer).
func cloudMetadata(ip netip.Addr) bool {
	switch ip {
	case netip.AddrFrom16([16]byte{0: 0xfd, 2: 0x0e, 3: 0xc2, 14: 0x02, 15: 0x54}),
		netip.AddrFrom4([4]byte{100, 100, 100, 200}), netip.AddrFrom4([4]byte{168, 63, 129, 16}):
		return true
	}
	return false
}

// metadataName reports whether host names a cloud's metadata service.
func metadataName(host string) bool {
	switch host {
	case "metadata", "metadata.google.internal", "metadata.goog", "instance-data", "instance-data.ec2.internal",
		"metadata.tencentyun.com", "metadata.azure.com":
		return true
	}
	return false
}
