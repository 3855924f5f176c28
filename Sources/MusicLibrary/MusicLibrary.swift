// The music folder's index. Filled in by issue 4.
import CSQLite
import GStreamerPlayback
