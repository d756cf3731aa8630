/* decimal.h — decimal numbers of text mesh files read as strtof and strtol read them
 * (decimal.c), with a fast path for the common forms.
 *
 * A mesh file is mostly numbers; strtof and strtol took 18% of a whole `gramps-render`
 * run on a 6.9 MB OBJ file (horse.obj, 1024x1024 raster frame). Most coordinates have at most 7 significant digits and a small
 * exponent, and for those one correctly rounded IEEE operation gives strtof's result
 * exactly: the digits m (m <= 2^24) and 10^k (k <= 10) are both floats exactly, so
 * m * 10^k or m / 10^k, rounded once, is the float nearest the decimal (Clinger's fast
 * path). Everything else (more digits, larger exponents, hexadecimal, inf and nan, or any
 * form the fast path does not follow to its end) goes to strtof / strtol itself, so the
 * results and end pointers are theirs in every case. */
#ifndef SCENES_DECIMAL_H
#define SCENES_DECIMAL_H

/* As strtof(p, end). */
float sc_strtof(const char *p, char **end);

/* As strtol(p, end, 10). */
long sc_strtol(const char *p, char **end);

#endif
