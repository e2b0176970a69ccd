import { controlPlaneSuite } from './control-plane.api.js'

controlPlaneSuite('the memory store', () => undefined)
