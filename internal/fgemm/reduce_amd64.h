// HREDUCE sets every lane of the zmm register r to op (VADDPS, VMAXPS) over
// r's 16 lanes, with t as scratch: halves, then quarters, pairs and
// neighbours, each swapped in t and combined.
#define HREDUCE(op, r, t) \
	VSHUFF32X4 $0x4e, r, r, t; \
	op         t, r, r; \
	VSHUFF32X4 $0xb1, r, r, t; \
	op         t, r, r; \
	VPERMILPS  $0x4e, r, t; \
	op         t, r, r; \
	VPERMILPS  $0xb1, r, t; \
	op         t, r, r
