/* calls.c: an MPI program that makes a known set of calls, for the tracing
 * library's tests (trace/pmpi_test.go checks the trace against it). Any
 * rank count of 2 or more. Iterations: argv[1] (default 3). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank, size, iters = argc > 1 ? atoi(argv[1]) : 3;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int right = (rank + 1) % size, left = (rank + size - 1) % size;
	double buf[1000] = {0}, rbuf[1000];
	for (int it = 0; it < iters; it++) {
		/* a ring of 100 doubles, blocking */
		if (rank == 0) {
			MPI_Send(buf, 100, MPI_DOUBLE, right, 7, MPI_COMM_WORLD);
			MPI_Recv(rbuf, 100, MPI_DOUBLE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(rbuf, 100, MPI_DOUBLE, left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(buf, 100, MPI_DOUBLE, right, 7, MPI_COMM_WORLD);
		}
		/* a non-blocking exchange with both neighbours, any source */
		MPI_Request rq[4];
		MPI_Irecv(rbuf, 10, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq[0]);
		MPI_Irecv(rbuf + 10, 10, MPI_INT, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &rq[1]);
		MPI_Isend(buf, 10, MPI_INT, left, 3, MPI_COMM_WORLD, &rq[2]);
		MPI_Isend(buf, 10, MPI_INT, right, 3, MPI_COMM_WORLD, &rq[3]);
		MPI_Waitall(4, rq, MPI_STATUSES_IGNORE);
		MPI_Sendrecv(buf, 1000, MPI_DOUBLE, right, 5, rbuf, 1000, MPI_DOUBLE, left, 5, MPI_COMM_WORLD,
			     MPI_STATUS_IGNORE);
		MPI_Allreduce(MPI_IN_PLACE, buf, 16, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		MPI_Bcast(buf, 3, MPI_INT, size - 1, MPI_COMM_WORLD);
	}
	/* a split into odd and even ranks, a reduction to each half's last rank */
	MPI_Comm half;
	MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
	int hr, hs;
	MPI_Comm_rank(half, &hr);
	MPI_Comm_size(half, &hs);
	MPI_Reduce(buf, rbuf, 5, MPI_DOUBLE, MPI_SUM, 0, half);
	if (hs > 1) {
		/* persistent: half-rank 0 sends twice to half-rank 1, by a
		 * standard and a buffered persistent send */
		MPI_Request p[2];
		static char bsend[2 * (4 + MPI_BSEND_OVERHEAD)];
		if (hr == 0) {
			MPI_Buffer_attach(bsend, sizeof bsend);
			MPI_Send_init(buf, 4, MPI_CHAR, 1, 9, half, &p[0]);
			MPI_Bsend_init(buf, 4, MPI_CHAR, 1, 9, half, &p[1]);
		} else if (hr == 1) {
			MPI_Recv_init(rbuf, 4, MPI_CHAR, 0, 9, half, &p[0]);
			MPI_Recv_init(rbuf, 4, MPI_CHAR, 0, 9, half, &p[1]);
		}
		if (hr <= 1)
			for (int k = 0; k < 2; k++) {
				MPI_Start(&p[k]);
				MPI_Wait(&p[k], MPI_STATUS_IGNORE);
			}
		if (hr <= 1) {
			MPI_Request_free(&p[0]);
			MPI_Request_free(&p[1]);
		}
		if (hr == 0) {
			void *b;
			int n;
			MPI_Buffer_detach(&b, &n);
		}
	}
	MPI_Comm_free(&half);
	/* a ring topology and its one-dimensional sub-grid */
	MPI_Comm cart, sub;
	int dims[1] = {size}, periods[1] = {1}, remain[1] = {1};
	MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
	MPI_Cart_sub(cart, remain, &sub);
	MPI_Barrier(sub);
	MPI_Comm_free(&sub);
	MPI_Comm_free(&cart);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}
