/* sanitizers.h — gramps-render-mpi under the sanitizers.
 *
 * ThreadSanitizer: Open MPI's own code is suppressed (sanitizers.c says why).
 *
 * AddressSanitizer's leak checker: Open MPI
 * leaves memory unfreed when MPI_Finalize unloads its components, and LSan cannot even
 * name the code that allocated it (the modules are gone). So in ASan builds this
 * program checks for leaks just before MPI_Finalize, when all of its own memory has been
 * freed and Open MPI's is still referenced from its globals (not a leak), with Open
 * MPI's libraries suppressed for the few blocks they drop during MPI_Init; the exit
 * check, after MPI_Finalize, is then skipped (LSan checks once). A leak of ours fails
 * the run as it does in every other program. Outside ASan builds this does nothing. */
#ifndef TOOLS_MPI_SANITIZERS_H
#define TOOLS_MPI_SANITIZERS_H

void mp_check_leaks_now(void);

#endif
