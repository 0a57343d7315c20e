/* callcost.c N MODE: the CPU time of one MPI call over N calls (default
 * 10^6), printed in ns: the process's CPU clock, so that the time the
 * process waits for a core on a shared machine does not count. MODE send (default): MPI_Send to MPI_PROC_NULL, which the
 * tracing library records as one event each; iprobe: MPI_Iprobe on
 * MPI_COMM_SELF that finds nothing, which it merges into one event per
 * loop. Run untraced and under the library, the difference is the
 * library's cost of one intercepted call, with no network in the way. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static void call(int probe)
{
	static int buf, flag;
	if (probe)
		MPI_Iprobe(MPI_ANY_SOURCE, 0, MPI_COMM_SELF, &flag, MPI_STATUS_IGNORE);
	else
		MPI_Send(&buf, 1, MPI_INT, MPI_PROC_NULL, 0, MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int probe = argc > 2 && strcmp(argv[2], "iprobe") == 0;
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	for (long i = 0; i < n / 10; i++) /* warm-up */
		call(probe);
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	for (long i = 0; i < n; i++)
		call(probe);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	double t = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) * 1e-9;
	if (rank == 0)
		printf("%.2f\n", t / n * 1e9);
	MPI_Finalize();
	return 0;
}
