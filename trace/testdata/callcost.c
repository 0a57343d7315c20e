/* callcost.c N: the time of one MPI_Iprobe on MPI_COMM_SELF with nothing
 * to find, over N calls (default 10^6), printed in ns. Run untraced and
 * under the tracing library, the difference is the library's cost of one
 * intercepted call with the network out of the way. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int flag, rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < n / 10; i++) /* warm-up */
		MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	double t0 = MPI_Wtime();
	for (long i = 0; i < n; i++)
		MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	double t = MPI_Wtime() - t0;
	if (rank == 0)
		printf("%.2f\n", t / n * 1e9);
	MPI_Finalize();
	return 0;
}
