import { render } from 'preact'
import { App } from './app.js'
import '../../console/src/ui/ui.css'
import './portal.css'

render(<App />, document.getElementById('app')!)
