package portal

import (
	"net/netip"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"unicode"
)

// MaxTargetNetworks bounds a contest's target networks.
const MaxTargetNetworks = 64

// MaxTarget bounds a target URL, in bytes: a job's every request starts
// with it, and pages show it.
const MaxTarget = 2048

// TargetRules are where a contest's targets may be (Settings.Targets).
type TargetRules struct {
	// Local allows the workers' own machine and link (LocalTargets).
	Local bool
	// Networks, when any, are the only ranges a worker connects to.
	Networks []netip.Prefix
}

// Targets are the settings' rules for targets.
func (s Settings) Targets() TargetRules {
	return TargetRules{Local: s.LocalTargets, Networks: s.TargetNetworks}
}

// CheckTarget validates a target URL: absolute http or https with a host.
// Unless local (r.Local), its host may not name the worker's own machine,
// link or cloud: localhost, a loopback, unspecified, link-local (where most
// clouds serve their metadata) or multicast address, another cloud's
// metadata address (cloudMetadata) or name (metadataName); an address
// outside r.Networks, when any, is refused too. A name that resolves to
// one, or to an address of the worker's own interfaces, is refused when a
// worker connects (DialGuard).
func CheckTarget(target string, r TargetRules) (*url.URL, error) {
	if strings.TrimSpace(target) == "" {
		return nil, Errorf(CodeInvalid, "no target registered")
	}
	if len(target) > MaxTarget {
		return nil, Errorf(CodeInvalid, "a target has at most %d bytes; this one has %d", MaxTarget, len(target))
	}
	u, err := url.Parse(target)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return nil, Errorf(CodeInvalid, "target %q is not an http:// or https:// URL with a host", target)
	}
	if r.Local {
		return u, nil
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	ip, err := netip.ParseAddr(host)
	if err == nil && localAddress(ip) || host == "localhost" || strings.HasSuffix(host, ".localhost") || metadataName(host) {
		return nil, Errorf(CodeInvalid, "target %q is on the worker's own machine, network link or cloud: this contest takes no such targets", target)
	}
	if err == nil && !inNetworks(ip, r.Networks) {
		return nil, Errorf(CodeInvalid, "target %q is outside the contest's networks (%s)", target, networksText(r.Networks))
	}
	return u, nil
}

// inNetworks reports whether ip is in one of networks, or networks is
// empty.
func inNetworks(ip netip.Addr, networks []netip.Prefix) bool {
	if len(networks) == 0 {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, p := range networks {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// CIDRs is networks written out ("10.1.0.0/16"), never nil.
func CIDRs(networks []netip.Prefix) []string {
	s := make([]string, len(networks))
	for i, p := range networks {
		s[i] = p.String()
	}
	return s
}

// networksText lists networks for a message.
func networksText(networks []netip.Prefix) string { return strings.Join(CIDRs(networks), ", ") }

// ParseNetworks reads a list of networks separated by commas or spaces,
// each CIDR ("10.1.0.0/16") or one address (a network of one).
func ParseNetworks(text string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, f := range strings.FieldsFunc(text, func(r rune) bool { return r == ',' || unicode.IsSpace(r) }) {
		p, err := netip.ParsePrefix(f)
		if err != nil {
			ip, aerr := netip.ParseAddr(f)
			if aerr != nil || ip.Zone() != "" {
				return nil, Errorf(CodeInvalid, "%q is neither a network (10.1.0.0/16) nor an address", f)
			}
			p = netip.PrefixFrom(ip.Unmap(), ip.Unmap().BitLen())
		}
		if !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out, nil
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
// (outside the contest's networks too, when it has some) or to one of the
// worker's own (its interfaces' addresses: a target must not be the
// worker's machine, nor the portal when it runs there), once a name has
// been resolved, and for every connection, a redirect's too: see
// engine.WithDialControl.
type DialGuard struct {
	own      map[netip.Addr]bool
	networks []netip.Prefix
}

// NewDialGuard is a guard for a worker whose own addresses are own, in a
// contest whose targets must be in networks (any, when none).
func NewDialGuard(own []netip.Addr, networks []netip.Prefix) *DialGuard {
	g := &DialGuard{own: make(map[netip.Addr]bool, len(own)), networks: networks}
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
	if !inNetworks(ip, g.networks) {
		return Errorf(CodeDenied, "%s is outside the contest's networks (%s)", ip, networksText(g.networks))
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
