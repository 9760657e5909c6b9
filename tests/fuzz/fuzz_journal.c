/* fuzz_journal - the journal reader (core/journal.c journal_read_file) on any
 * bytes: every record it returns is valid, and the records it kept plus the
 * torn tail it skipped account for the whole file.  Then each record as
 * `lockstorm dump` prints it. */
#include "fuzz.h"

#include "core/journal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *devnull;
	struct jrec *rec = NULL;
	size_t n = 0, torn = 0;
	if (!devnull && !(devnull = fopen("/dev/null", "w")))
		abort();
	if (journal_read_file(fuzz_file(data, size), &rec, &n, &torn) != 0)
		abort(); /* a readable file always reads */
	FUZZ_ASSERT(n * sizeof(struct jrec) + torn <= size);
	for (size_t i = 0; i < n; i++) {
		FUZZ_ASSERT(journal_valid(&rec[i]));
		journal_print_json(devnull, &rec[i]);
	}
	free(rec);
	return 0;
}
