package portal

import (
	"net/netip"
	"net/url"
	"strings"
	"syscall"
)

// CheckTarget validates a target URL: absolute http or https with a host.
// Unless local (Settings.LocalTargets), its host may not name the worker's
// own machine or link: localhost, or a loopback, unspecified, link-local
// (where clouds serve their metadata) or multicast address. A name that
// resolves to one is refused when a worker connects (DialControl).
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
	if ip, err := netip.ParseAddr(host); err == nil && localAddress(ip) || host == "localhost" || strings.HasSuffix(host, ".localhost") {
		return nil, Errorf(CodeInvalid, "target %q is on the worker's own machine or network link: this contest takes no such targets", target)
	}
	return u, nil
}

// DialControl refuses a worker's connection to a local address (as
// CheckTarget's), once a name has been resolved: see engine.WithDialControl.
func DialControl(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return Errorf(CodeInvalid, "connecting to %q: not an address", address)
	}
	if localAddress(ap.Addr()) {
		return Errorf(CodeDenied, "%s is on the worker's own machine or network link: this contest takes no such targets", ap.Addr())
	}
	return nil
}

// localAddress reports whether ip is one CheckTarget refuses.
func localAddress(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsUnspecified() || ip.IsLinkLocalUnicast() || ip.IsMulticast()
}
