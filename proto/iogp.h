/* iogp.h - umbrella header of libiogram-proto. */
#ifndef IOGP_H
#define IOGP_H
#include "iogp_err.h"
#include "iogp_hist.h"
#include "iogp_wire.h"
#include "iogp_replay.h"
#include "iogp_model.h"
#include "iogp_export.h"
#include "iogp_recorder.h"
#include "iogp_insights.h"
#endif
