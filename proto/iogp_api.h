/* iogp_api.h - marks what libiogram-proto exports: the library builds with
 * hidden visibility, so only declarations carrying IOGP_API are its API. */
#ifndef IOGP_API_H
#define IOGP_API_H

#define IOGP_API __attribute__((visibility("default")))

#endif
