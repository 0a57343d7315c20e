package emulate

// splitAccess returns how an access of d bytes is cut into k packets of at
// most l bytes under a splitting version (paper 000, section 7): version 1
// sends one packet (k = 1, l = d); version 2 packets of cfg.PacketBytes;
// version 3 the k0, l0 of cfg.SplitFunc. A zero-length access is one empty
// packet, so that it still reaches the module and is acknowledged.
func splitAccess(d int, version SplitVersion, cfg Config) (k, l int) {
	if d <= 0 {
		return 1, 0
	}
	switch version {
	case SplitFixed:
		l = cfg.PacketBytes
	case SplitModel:
		if cfg.SplitFunc != nil {
			_, l = cfg.SplitFunc(d)
		}
	}
	if l <= 0 || l > d {
		l = d
	}
	return (d + l - 1) / l, l
}
