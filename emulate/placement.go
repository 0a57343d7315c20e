package emulate

// hashPrime is the Mersenne prime 2^31 - 1 of the hash family.
const hashPrime = 1<<31 - 1

// hashParams draws a and b of the universal hash function from seed with
// splitmix64, so every rank derives the same function without communicating.
func hashParams(seed int64) (a, b uint64) {
	x := uint64(seed)
	next := func() uint64 {
		x += 0x9e3779b97f4a7c15
		z := x
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
		z = (z ^ (z >> 27)) * 0x94d049bb133111eb
		return z ^ (z >> 31)
	}
	a = 1 + next()%(hashPrime-1)
	b = next() % hashPrime
	return a, b
}

// hashModule places variable id on a module by universal hashing (paper
// 000, section 3.2), with the Carter-Wegman family
//
//	h(x) = ((a x + b) mod P) mod p,  P = 2^31 - 1, 1 <= a < P, 0 <= b < P,
//
// which sends any two distinct IDs below P to the same module with
// probability about 1/p over the choice of a and b.
func hashModule(id, a, b uint64, p int) int {
	return int(((a*(id%hashPrime) + b) % hashPrime) % uint64(p))
}
