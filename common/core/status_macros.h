#ifndef TEMPEST_COMMON_CORE_STATUS_MACROS_H_
#define TEMPEST_COMMON_CORE_STATUS_MACROS_H_

// RETURN_IF_ERROR / ASSIGN_OR_RETURN: the short names of
// TEMPEST_RETURN_IF_ERROR / TEMPEST_ASSIGN_OR_RETURN (common/api/status_macros.h,
// where they live so that the component API can use them too), for every
// module above common/api.
//
//   RETURN_IF_ERROR(file.Open(path));
//   ASSIGN_OR_RETURN(TopologyDef def, loader.LoadFile(path));
//
// The short names are defined only when nothing else (Abseil does not) has
// defined them already.

#include "common/api/status_macros.h"

#ifndef RETURN_IF_ERROR
#define RETURN_IF_ERROR(expr) TEMPEST_RETURN_IF_ERROR(expr)
#endif

#ifndef ASSIGN_OR_RETURN
#define ASSIGN_OR_RETURN(lhs, rexpr) TEMPEST_ASSIGN_OR_RETURN(lhs, rexpr)
#endif

#endif  // TEMPEST_COMMON_CORE_STATUS_MACROS_H_
